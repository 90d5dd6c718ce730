"""AML screening (``screening``), its watchlist data and PDF reports (``report``): pure
functions over plain data, so the backend uses them without reaching up a layer."""
