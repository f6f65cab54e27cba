"""Metric declarations and the scoring of one query."""

from runner.metrics.declare import CATEGORIES, METRICS, QUALITY, Metric
from runner.metrics.scoring import QueryScore, score_query

__all__ = ["CATEGORIES", "METRICS", "QUALITY", "Metric", "QueryScore", "score_query"]
