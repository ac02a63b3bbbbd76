"""One registration module per algorithm family (``METHODS`` / ``TARGETS`` lists)."""
