"""Every page of the site, in one registry: :data:`PAGES`.

Each :class:`Page` states once its path, template, navigation title, when it exists and its view (what
its template receives, a record per page); a :class:`PageFamily` states a page per member of a kind: a
task made of subjects (MMLU), a checkpoint series, an evaluated model, a reported model, a task. The
navigation lists the pages that have a title, and the site build writes every page the registry yields,
both from here. A template reads its page's view and the :class:`Frame` every page shares, nothing else:
no registry of tasks or methods is a template global (``tests/test_site_registry.py`` checks each
template's names).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar

from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.tasks import TASKS
from olmes.site.browser_files import write_instance_files, write_model_files
from olmes.site.generative import GENERATIVE_NAV, GENERATIVE_PAGE, task_page
from olmes.site.model_view import ModelView, model_view
from olmes.site.nav_views import (
    SiteInputs,
    View,
    cf_mcf_view,
    generative_index_view,
    leaderboard_view,
    methods_view,
    normalization_view,
    reproduction_view,
    robustness_view,
    subjects_view,
    tables_view,
)
from olmes.site.pages import SiteModel, TaskFacts
from olmes.site.reported import ReportedView, reported_view
from olmes.site.task_view import TaskView, browser_setup, generative_task_view, task_methods, task_view
from olmes.site.training_view import training_index_view, training_members, training_view
from olmes.site.writer import SiteWriter

Member = TypeVar("Member")


class Frame(TypedDict):
    """What every page shows around its own view: the header's title and navigation, the footer's
    tasks, and where the page is (``root``: the way back to the site's root from it)."""

    site_title: str
    nav: list[tuple[str, str]]  # (path, title) of each page of the navigation
    tasks: list[str]
    task_facts: dict[str, TaskFacts]
    root: str
    current: str


@dataclass(frozen=True)
class Page:
    """One page: in the navigation under its ``title``, or outside it (``title`` None)."""

    path: str  # relative to the site's root
    template: str
    title: str | None  # its navigation label; None: not in the navigation
    exists: Callable[[SiteInputs], bool]
    view: View

    def pages(self, inputs: SiteInputs) -> list[Page]:
        return [self] if self.exists(inputs) else []


@dataclass(frozen=True)
class PageFamily(Generic[Member]):
    """A page per member (a task, a model): its path and its view from the member; in the navigation
    under ``title(member)`` when the family has a title."""

    template: str
    members: Callable[[SiteInputs], Sequence[Member]]
    path: Callable[[Member], str]
    view: Callable[[SiteInputs, SiteWriter, Member], Mapping[str, Any]]
    title: Callable[[Member], str] | None = None

    def pages(self, inputs: SiteInputs) -> list[Page]:
        return [
            Page(
                self.path(member),
                self.template,
                self.title(member) if self.title else None,
                _always,
                functools.partial(self.view, member=member),
            )
            for member in self.members(inputs)
        ]


def site_pages(inputs: SiteInputs) -> list[Page]:
    """Every page that exists for these inputs, those of the navigation in its order."""
    return [page for entry in PAGES for page in entry.pages(inputs)]


def navigation(pages: list[Page]) -> list[tuple[str, str]]:
    """(path, title) of the pages of the navigation, in its order."""
    return [(page.path, page.title) for page in pages if page.title is not None]


def _always(inputs: SiteInputs) -> bool:
    return True


# -- the pages of each model and task --------------------------------------------------------------------


def model_page_view(inputs: SiteInputs, out: SiteWriter, member: SiteModel) -> ModelView:
    return model_view(inputs.data, member)


def reported_page_view(inputs: SiteInputs, out: SiteWriter, member: SiteModel) -> ReportedView:
    return reported_view(member)


def task_page_view(inputs: SiteInputs, out: SiteWriter, member: str) -> TaskView:
    """The task's page, and its instance browser's data: the instances in pieces, one file per model
    (script files, since browsers refuse fetch on file://), loaded only when a reader picks the model.
    An OLMES v0.2 generative task's page is its own (:mod:`olmes.site.generative`)."""
    task = member
    if task in GENERATIVE_TASKS:
        return generative_task_view(task_page(inputs.generative, out, task))
    instances = inputs.browser.instances(task)
    files = write_instance_files(out, task, instances)
    models = write_model_files(out, inputs.browser, inputs.data_files, task)
    methods = task_methods(inputs.data, task)
    browser = browser_setup(task, methods, instances, files, models)
    return task_view(inputs.data, task, methods, browser, len(instances))


def _model_path(model: SiteModel) -> str:
    return model.page


def _task_path(task: str) -> str:
    return f"tasks/{task}.html"


PAGES: tuple[Page | PageFamily, ...] = (
    Page("index.html", "leaderboard.html", "Leaderboard", _always, leaderboard_view),
    Page(
        GENERATIVE_PAGE,
        "generative.html",
        GENERATIVE_NAV,
        lambda inputs: inputs.generative.table is not None,
        generative_index_view,
    ),
    Page("normalization.html", "normalization.html", "Normalization", _always, normalization_view),
    Page("cf-vs-mcf.html", "cf_mcf.html", "CF vs MCF", _always, cf_mcf_view),
    PageFamily(
        "subjects.html",
        lambda inputs: inputs.data.subject_tasks(),
        lambda task: f"{task}.html",
        subjects_view,
        title=lambda task: TASKS[task].display_name,
    ),
    Page(
        "training.html",
        "training_index.html",
        "Training",
        lambda inputs: bool(training_members(inputs)),
        training_index_view,
    ),
    PageFamily("training.html", training_members, lambda series: series.page, training_view),
    Page("robustness.html", "robustness.html", "Robustness", _always, robustness_view),
    Page(
        "reproduction.html",
        "reproduction.html",
        "Reproduction",
        lambda inputs: bool(inputs.reproduction),
        reproduction_view,
    ),
    Page(
        "paper-check.html",
        "paper_check.html",
        "Paper check",
        lambda inputs: inputs.paper_checked,
        tables_view,
    ),
    Page("methods.html", "methods.html", "Methods", _always, methods_view),
    PageFamily("model.html", lambda inputs: inputs.data.models, _model_path, model_page_view),
    PageFamily("reported.html", lambda inputs: inputs.data.reported_models, _model_path, reported_page_view),
    PageFamily(
        "task.html", lambda inputs: [*inputs.data.tasks, *inputs.generative.tasks], _task_path, task_page_view
    ),
)
"""Every page of the site: the navigation's in its order (Training's, with a page per checkpoint series;
"OLMES v0.2 generative", the page that lists the generative tasks), then a page per evaluated model, per
reported model and per task (the ten, then the OLMES v0.2 generative tasks scored)."""
