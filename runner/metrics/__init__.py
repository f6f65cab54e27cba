"""Metric declarations and the scoring of one query."""

from runner.metrics.declare import CATEGORIES, METRICS, QUALITY, Metric, declare, quality_metrics
from runner.metrics.scoring import QueryScore, score_query

__all__ = ["CATEGORIES", "METRICS", "QUALITY", "Metric", "QueryScore", "declare",
           "quality_metrics", "score_query"]
