"""A reproduction report (:class:`olmes.core.records.ReproductionReport`) in the lines ``olmes reproduce``
and the workflow's main job print: torch-free, so that the workflow reads it without the models."""

from __future__ import annotations

from olmes.core.records import ReproductionReport


def summary_lines(report: ReproductionReport, display_name: str | None = None) -> list[str]:
    """The comparison as the main job prints it: one line per task, each flipped decision with its
    margins, then the verdict. The model is named by its ``display_name`` (what it is: tuning,
    quantization) where the caller has it, as the tables and the site name it."""
    model, limit, where = display_name or report["model"], report["limit"], report["hardware"]
    lines = [f"{model}: first {limit} instances of each task recomputed here ({where})"]
    for task in report["tasks"]:
        lines.append(
            f"  {task['task']:<14} {task['requests']:>5} requests"
            f"  max |delta logprob| {task['max_abs_delta']:.2e}"
            f" ({task['max_share_of_tolerance']:.2f} of the bound)"
            f"  decisions {task['identical']}/{task['decisions']} identical"
        )
        for flip in task["flips"]:
            kind = "tie within float error" if flip["within_error"] else "NOT explained by float error"
            lines.append(
                f"    {flip['method']} instance {flip['instance_index']}: {kind} (choice {flip['here']} "
                f"by {flip['margin_here']:.1e} here, {flip['there']} by {flip['margin_there']:.1e} in the "
                f"store; bound {flip['bound']:.1e})"
            )
    for task in report.get("generative", []):
        listed = ", ".join(map(str, task["differing"]))
        differing = f" (differ: instances {listed})" if listed else ""
        lines.append(
            f"  {task['task']:<14} {task['instances']:>5} generations (OLMES v0.2)"
            f"  {task['identical']}/{task['instances']} identical{differing}"
            f"  max |delta gold logprob| {task['max_abs_delta']:.2e}"
        )
    lines.append(
        f"  {report['verdict']}: {report['identical']}/{report['decisions']} decisions identical"
        + (f", {report['ties_within_error']} ties within float error" if report["ties_within_error"] else "")
        + (f", {report['unexplained_flips']} not explained" if report["unexplained_flips"] else "")
        + f"; max |delta logprob| {report['max_abs_delta']:.2e} over {report['requests']} requests "
        f"({report['max_share_of_tolerance']:.2f} of the error model's bound"
        + (f", {report['beyond_tolerance']} beyond it" if report["beyond_tolerance"] else "")
        + f"), {report['wall_time_s']:.0f} s"
    )
    return lines
