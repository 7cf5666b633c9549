"""The static leaderboard site: score summaries, tables and requests -> HTML pages under ``site/``.

:mod:`olmes.site.build` gathers the inputs and writes the pages; :mod:`olmes.site.charts` makes the
altair (Vega-Lite) chart specs that the pages render with the vega files shipped in ``static/``.
"""
