"""Client code as an integrator writes it: the real base URL, no idea a mock exists."""
