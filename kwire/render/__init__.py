"""Renderers: pure functions from Exchanges and summaries to text, JSON or rich renderables."""
