"""The data model: indexes, limits, secrets, columnar throughput points, Go time texts."""
