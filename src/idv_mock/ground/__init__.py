"""Layer 0, the ground floor (ARCHITECTURE.md): what every other layer stands on, and
nothing of idv_mock above it."""
