"""Figure builders: plotly figures from the core's numbers, the theme (one name and colour per
algorithm), and the pure half of export. Nothing here imports Streamlit (docs/architecture.md)."""
