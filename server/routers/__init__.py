"""The API's routes by resource; create_app (server/app.py) includes each module's router."""
