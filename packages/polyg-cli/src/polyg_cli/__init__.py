"""polyg cli."""
