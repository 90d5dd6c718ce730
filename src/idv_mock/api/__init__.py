"""The HTTP layer: parse a request, call the backend, render the result or the spec's error."""
