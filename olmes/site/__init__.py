"""The static leaderboard site: score summaries, tables and requests -> HTML pages under ``site/``.

:mod:`olmes.site.inputs` reads the inputs (the tables' files checked against their records);
:mod:`olmes.site.pages` holds the models and facts every page shares; :mod:`olmes.site.registry` is
the one list of the navigation's pages, each with its view; :mod:`olmes.site.model_view`,
:mod:`olmes.site.task_view`, :mod:`olmes.site.prompts` and :mod:`olmes.site.predictions` gather what
the model and task pages show; :mod:`olmes.site.downloads` makes the leaderboard's downloads;
:mod:`olmes.site.filters` writes values into the templates; :mod:`olmes.site.writer` and
:mod:`olmes.site.build` render and write the pages; :mod:`olmes.site.charts` makes the altair
(Vega-Lite) chart specs that the pages render with the vega files shipped in ``static/``.
"""
