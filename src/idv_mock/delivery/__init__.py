"""Layer 1: webhooks over real HTTP: the delivery levers, the dispatcher and the test
receiver (ARCHITECTURE.md)."""
