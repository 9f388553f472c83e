"""polyg server."""
