"""The use cases: one function per thing a user asks, the front door of the library.

The CLI (``trainbill.cli``) and the web app (``trainbill.web``) parse their input into a plan,
a catalog and plain options, make ONE call into a module here, and render the typed record it
returns. The pipeline (calibrations applied once, usage worked out, drivers priced, the budget
simulated, the planner searched) is assembled here and nowhere else, so a calibration, a
caution or a budget means the same on every front end.

One module per question (imported on its own: ``trainbill forecast`` loads neither the planner
nor the bill readers it does not use):

* ``calibrations``: read ``--calibration`` files or a request's calibration documents.
* ``price``: price a plan (``price_plan``: the forecast and, beside it, its outlook), the
  forecast alone (``forecast_plan``), the node-count sweep (``size_plan``).
* ``simulate``: the Monte Carlo of a plan and its checkpoint and spot studies.
* ``optimize``: the planner's search, its size, and the best plan's launcher export.
* ``compare``: two plans side by side (``diff``), the orchestrators, a bill against a plan.
* ``report``: what the HTML report shows (``report_data``).
* ``check``: a quote's audit and a claimed bill's audit.
* ``whatif``: the article's what-ifs (storage, sparse attention, rule of thumb, imports).
* ``commit``: the Savings Plan advice from monthly usage.
* ``runs``: record, close and read runs in the registry.
"""
