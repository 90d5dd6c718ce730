"""The service's parts: each owns one area of the state and is reached as
``service.<part>`` (the module, the class and the attribute share the part's name)."""
