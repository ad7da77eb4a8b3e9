"""Pictures of the numbers: SVG charts and the self-contained HTML report."""
