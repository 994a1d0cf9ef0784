"""The report layer: the audit's ordered sections, the self-contained HTML and the terminal summary.

It renders the concepts' result objects; concepts never import it."""
