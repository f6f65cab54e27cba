"""Statistics over seeds (intervals, paired comparisons) and scaling fits."""
