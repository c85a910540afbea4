"""Benches and synthetic sessions: recordings made with a known body, and the fit's and the live stream's figures
measured on them."""
