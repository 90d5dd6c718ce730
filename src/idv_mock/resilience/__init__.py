"""The resilience report: an integrator's test suite run once per profile of production
misbehaviour (late, duplicated, reordered or lost webhooks; a flaky, slow or rate-limited
API), and a grid of what it survives.

``profiles`` reads the profile files; ``runner`` runs the suite per profile in a
subprocess and gathers the outcomes; ``report`` renders the grid (terminal, JSON, HTML).
"""
