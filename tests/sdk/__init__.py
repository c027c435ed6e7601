"""The SDK subject: cases L1-L13 on the pinned SDK, its releases and fixed copies."""
