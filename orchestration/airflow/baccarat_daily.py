"""baccarat_daily: one run of the pipeline per day (docs/scheduling.md).

simulate (spark-submit jobs/simulate.py) -> composition (spark-submit jobs/composition.py, when the
run's `composition` param is on) -> marts (spark-submit jobs/marts.py: Spark tasks over the run's shoe
ranges, then the warehouse published by the driver) -> report; and on the
`vacuum_weekday`, vacuum.

The run id and the seed come from the run's logical date (`<rules>-<YYYY-MM-DD>`, seed YYYYMMDD), so a
re-run, a retry or a backfill of a date deals the same shoes under the same id, and the jobs, idempotent
per run id, commit that date once. Every step calls the `baccarat` CLI or a job in jobs/; nothing here
imports the library.
"""

import re
import subprocess
import sys
from datetime import datetime

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Param, Variable, task
from airflow.sdk.exceptions import AirflowException, AirflowFailException

BAD_INPUT = 2  # the CLI's exit status for bad input: retrying cannot help


def logical_day(dag_run) -> datetime:
    """The day a run deals; a run without a logical date has none, and is refused."""
    if dag_run.logical_date is None:
        raise AirflowFailException(
            "baccarat_daily takes its run id and seed from the logical date, and this run has none: "
            "trigger it with one (airflow dags trigger baccarat_daily --logical-date 2026-01-31)")
    return dag_run.logical_date


def daily_run_id(dag_run, rules: str) -> str:
    return f"{rules}-{logical_day(dag_run):%Y-%m-%d}"


def daily_seed(dag_run) -> int:
    return int(f"{logical_day(dag_run):%Y%m%d}")


def baccarat(*arguments: str) -> None:
    """`baccarat ARGUMENTS` in this worker's Python; its output goes to the task's log, and a failure
    fails the task with the CLI's one-line message (bad input without a retry)."""
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *arguments], capture_output=True, text=True)
    print(done.stdout, end="")
    print(done.stderr, end="", file=sys.stderr)
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise (AirflowFailException if done.returncode == BAD_INPUT else AirflowException)(message)


class SparkJob(SparkSubmitOperator):
    """SparkSubmitOperator whose connection id is a template too (a Variable here)."""

    template_fields = (*SparkSubmitOperator.template_fields, "_conn_id")

    def execute(self, context) -> None:
        """As SparkSubmitOperator's, except that the job's exit status for bad input fails the task at once:
        a retry would print the same line again."""
        try:
            super().execute(context)
        except AirflowException as failure:
            if re.search(rf"Error code is: {BAD_INPUT}\b", str(failure)):
                message = f"{self.task_id}: bad input, the job's one line is above; not retried"
                raise AirflowFailException(message) from None
            raise


def spark_job(task_id: str, job: str, arguments: list[str], **options) -> SparkJob:
    """spark-submit REPOSITORY/jobs/JOB on the Spark connection, with the package zip if there is one and
    the shipped log4j configuration that keeps the driver's log to errors."""
    repository = "{{ var.value.baccarat_repository }}"
    return SparkJob(
        task_id=task_id,
        conn_id="{{ var.value.get('baccarat_spark_conn_id', 'spark_default') }}",
        application=f"{repository}/jobs/{job}",
        py_files="{{ var.value.get('baccarat_py_files', '') }}",
        conf={"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={repository}/conf/spark/log4j2.properties"},
        name=f"baccarat-{task_id}",
        application_args=arguments,
        **options,
    )


# The shipped rule sets whose table decides every draw (pipeline.rule_sets.fixed_tableau_rule_sets, which this
# file does not import: tests/unit/test_airflow_params.py holds them equal). Any other is refused when the run
# is triggered: banque was dealt, then failed at the marts task; chemin de fer failed at simulate.
DAILY_RULES = ["europe", "ez_baccarat", "punto_banco", "super_six"]
RUN_ID = "{{ daily_run_id(dag_run, params.rules) }}"
OUT = "{{ var.value.baccarat_out }}"

with DAG(
    dag_id="baccarat_daily",
    schedule="@daily",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 2},  # the delay between tries: Airflow's [core] default_task_retry_delay
    user_defined_macros={"daily_run_id": daily_run_id, "daily_seed": daily_seed},
    params={
        "rules": Param("punto_banco", type="string", enum=DAILY_RULES, description=(
            "A rule set in conf/rules whose table decides every draw, by name. Not banque (two hands: the marts "
            "and the report read one-hand rounds) nor chemin de fer (its strategies are no params here): deal "
            "those with `baccarat simulate`.")),
        "shoes": Param(200_000, type="integer", description="Shoes dealt per day (the CLI checks the range)."),
        "composition": Param(False, type="boolean", description="Also run the composition job (round_ev)."),
        "vacuum_weekday": Param(6, type="integer", minimum=0, maximum=6,
                                description="The weekday of the vacuum, 0 Monday to 6 Sunday."),
    },
    doc_md=__doc__,
    tags=["baccarat"],
) as dag:
    simulate = spark_job("simulate", "simulate.py", [
        "--rules", "{{ params.rules }}", "--shoes", "{{ params.shoes }}", "--seed", "{{ daily_seed(dag_run) }}",
        "--run-id", RUN_ID, "--out", OUT])
    composition = spark_job("composition", "composition.py", ["--run-id", RUN_ID, "--out", OUT])
    # the marts built by Spark tasks over the run's shoe ranges, then the warehouse published by the driver
    built = spark_job("marts", "marts.py", ["--run-id", RUN_ID, "--out", OUT,
                                            "--warehouse", "{{ var.value.baccarat_warehouse }}"],
                      trigger_rule="none_failed_min_one_success")

    @task.branch
    def composition_configured(params=None) -> str:
        return "composition" if params["composition"] else "marts"

    @task
    def report(params=None, dag_run=None) -> None:
        baccarat("report", "--out", Variable.get("baccarat_out"), "--warehouse", Variable.get("baccarat_warehouse"),
                 "--run-id", daily_run_id(dag_run, params["rules"]), "--page", Variable.get("baccarat_report_page"))

    @task.short_circuit
    def vacuum_day(params=None, dag_run=None) -> bool:
        return logical_day(dag_run).weekday() == params["vacuum_weekday"]

    @task
    def vacuum() -> None:
        baccarat("vacuum", "--out", Variable.get("baccarat_out"))

    simulate >> composition_configured() >> [composition, built]
    composition >> built
    built >> report() >> vacuum_day() >> vacuum()
