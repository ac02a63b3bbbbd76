"""One check-registration module per family."""
