"""How results are shown: the trial table in the terminal, Markdown and CSV, and the run folder."""
