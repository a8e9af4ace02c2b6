"""The HTTP layer: configuration, the client and its transport."""
