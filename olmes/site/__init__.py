"""The static leaderboard site: score summaries, tables and requests -> HTML pages under ``site/``.

:mod:`olmes.site.inputs` reads the inputs; :mod:`olmes.site.pages` gathers what each page shows;
:mod:`olmes.site.filters` writes values into the templates; :mod:`olmes.site.build` renders and
writes the pages; :mod:`olmes.site.charts` makes the altair (Vega-Lite) chart specs that the pages
render with the vega files shipped in ``static/``.
"""
