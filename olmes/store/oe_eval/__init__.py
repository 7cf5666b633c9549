"""AI2's OLMES implementation (oe-eval): its run folders imported into olmes, ours exported to its layout."""
