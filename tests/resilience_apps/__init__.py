"""Two small integrator apps receiving the mock's webhooks, and a suite over them that the
resilience report runs (tests/test_resilience.py)."""
