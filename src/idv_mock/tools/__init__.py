"""Layer 5: what runs around the server: the state file, `idv-mock verify` and
`trigger`, and the hosted-form walker they share (ARCHITECTURE.md)."""
