"""Bundled datasets of selective (see README.md in this folder)."""
