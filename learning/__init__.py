"""Learning content: the lessons as data, the protocol walk-through's steps, the explanations
and the "reproduce in Python" snippets. Nothing here imports Streamlit (docs/architecture.md)."""
