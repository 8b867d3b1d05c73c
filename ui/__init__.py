"""Shared Streamlit helpers: cached wrappers around dpcore, figure builders, controls."""
