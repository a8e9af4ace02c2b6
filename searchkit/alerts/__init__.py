"""Alerts before a limit is hit: rules, incidents and their replay on the stored past.

- :mod:`~searchkit.alerts.rules`: :class:`~searchkit.alerts.rules.AlertRule` (when to
  warn), the default rule, :func:`~searchkit.alerts.rules.load_rules` (a TOML file).
- :mod:`~searchkit.alerts.machine`: the incident state machine, over arrays (one step for
  many incidents at an instant), shared by the live evaluation and the backtest.
- :mod:`~searchkit.alerts.incidents`: incident keys, states and transitions;
  :func:`~searchkit.alerts.incidents.evaluate` (pure: no I/O) and
  :func:`~searchkit.alerts.incidents.observe` (reads a source for it).
- :mod:`~searchkit.alerts.backtest`: :func:`~searchkit.alerts.backtest.backtest_alerts`.

Delivery (alertsend's side):

- :mod:`~searchkit.alerts.notices`: what one message says
  (:class:`~searchkit.alerts.notices.Notice`) and its one wording;
  :mod:`~searchkit.alerts.payloads`: Alertmanager's webhook JSON, Slack's text, an e-mail.
- :mod:`~searchkit.alerts.channels`: webhook, e-mail and log channels and how a send went.
- :mod:`~searchkit.alerts.journal`: the store's ``alerts/`` dataset (transitions,
  deliveries, incident states), :mod:`~searchkit.alerts.claims` (one sender of two
  collectors) and :mod:`~searchkit.alerts.delivery` (send what is pending, within a budget).
"""
