"""What the API (`api/`) and the pages (`web/`) share of HTTP, below both: request and
response helpers, Secure Data Transfer on the wire, the request journal, the write guard,
the control API's edges, fault rules' reach and the page of `GET /v3/submission`."""
