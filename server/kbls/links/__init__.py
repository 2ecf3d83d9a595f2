"""Links between notes: how they are written and read in a note's text, and its parsed view."""
