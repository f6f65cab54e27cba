"""Metric declarations and the scoring of one query."""

from runner.metrics.declare import (
    CATEGORIES,
    METRICS,
    QUALITY,
    Metric,
    category_columns,
    declare,
    own_categories,
    quality_metrics,
    split_name,
)
from runner.metrics.scoring import QueryScore, score_query

__all__ = ["CATEGORIES", "METRICS", "QUALITY", "Metric", "QueryScore", "category_columns",
           "declare", "own_categories", "quality_metrics", "score_query", "split_name"]
