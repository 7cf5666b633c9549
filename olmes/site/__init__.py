"""The static leaderboard site: the tables of ``olmes tables``, score summaries and requests -> HTML pages
under ``site/``; it formats the tables it is given and computes none.

:mod:`olmes.site.inputs` reads the inputs (the tables' files checked against their records);
:mod:`olmes.site.pages` holds the models and facts every page shares; :mod:`olmes.site.registry` is
the one list of every page (the navigation's, and a family of pages for the models, the reported
models and the tasks), each with its view; :mod:`olmes.site.nav_views`, :mod:`olmes.site.model_view`,
:mod:`olmes.site.reported`, :mod:`olmes.site.task_view`, :mod:`olmes.site.prompts` and
:mod:`olmes.site.predictions` gather what the pages show; :mod:`olmes.site.browser_files` writes the
instance browser's files; :mod:`olmes.site.downloads` makes the leaderboard's downloads;
:mod:`olmes.site.filters` writes values into the templates; :mod:`olmes.site.writer` and
:mod:`olmes.site.build` render and write the pages; :mod:`olmes.site.charts` makes the altair
(Vega-Lite) chart specs that the pages render with the vega files shipped in ``static/``.
"""
