"""What a run leaves: records, the report, CI outputs, comparisons and expectations."""
