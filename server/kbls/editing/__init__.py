"""What an editor asks of a note's own text: its outline and folds, the problems of its links and
their fixes, the tags being typed. Pure functions and small engine helpers; no LSP here."""
