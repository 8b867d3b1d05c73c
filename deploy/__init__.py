"""Serving the app to a lecture hall: several app processes behind a reverse proxy
(:mod:`deploy.class_server`, ``scripts/class_server.sh``)."""
