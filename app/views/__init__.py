"""Blueprints, one per area. Views read the request, call services, commit once, render."""
