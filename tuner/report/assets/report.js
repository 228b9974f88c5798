// The `ktune report` dashboard: renders window.KTUNE_REPORT (schema 1, written by `ktune report`
// into data.js) with Chart.js 3. Plain ES2017 in one file, no modules and no fetch, so the page
// opens from file:// without a server or a build step.
//
// The page tells a reader (and the headless-browser test) how rendering went: every error lands
// in the visible <pre id="render-errors"> as well as on the console, and on success
// <body data-rendered="true" data-charts="N"> with N the number of charts created.
'use strict';

(function () {
  const COLORS = {
    tuned: '#2563eb', defaultConfig: '#9ca3af', baseline: '#16a34a', change: '#dc2626',
    band: 'rgba(37, 99, 235, 0.15)', faint: 'rgba(71, 85, 105, 0.28)', best: '#f59e0b',
  };
  const GOLDEN_RATIO = 0.6180339887498949;

  let chartCount = 0;
  const pendingCharts = [];  // charts wait until their canvas is in the document: they size to it

  // ---------------------------------------------------------------- errors

  function showError(text) {
    const box = document.getElementById('render-errors');
    box.hidden = false;
    box.textContent += text + '\n';
  }

  function describeError(error) {
    return error && error.stack ? String(error.stack) : String(error);
  }

  // Installed when this file loads, before chart.min.js and data.js, so their failures show too.
  window.onerror = function (message, source, line, column, error) {
    if (error && error.shownOnPage) return false;  // render() already showed it
    showError(`${message} (${source || 'page'}:${line || '?'})`);
    return false;  // let the console report it as well
  };
  const consoleError = console.error.bind(console);
  console.error = function (...args) {
    showError(args.map((arg) => (arg instanceof Error ? describeError(arg) : String(arg))).join(' '));
    consoleError(...args);
  };

  // ---------------------------------------------------------------- formatting

  function threeDigits(x) {
    const size = Math.abs(x);
    return size >= 100 ? x.toFixed(0) : size >= 10 ? x.toFixed(1) : x.toFixed(2);
  }

  function isNumber(x) {
    return typeof x === 'number' && isFinite(x);
  }

  function formatTime(ns) {
    if (!isNumber(ns)) return '–';
    if (ns === 0) return '0';
    const size = Math.abs(ns);
    if (size >= 1e9) return `${threeDigits(ns / 1e9)} s`;
    if (size >= 1e6) return `${threeDigits(ns / 1e6)} ms`;
    if (size >= 1e3) return `${threeDigits(ns / 1e3)} us`;
    return `${threeDigits(ns)} ns`;
  }

  function formatBandwidth(bytesPerSecond) {
    if (!isNumber(bytesPerSecond)) return '–';
    return bytesPerSecond >= 1e12 ? `${threeDigits(bytesPerSecond / 1e12)} TB/s`
                                  : `${threeDigits(bytesPerSecond / 1e9)} GB/s`;
  }

  function formatFlops(flopsPerSecond) {
    if (!isNumber(flopsPerSecond)) return '–';
    return flopsPerSecond >= 1e12 ? `${threeDigits(flopsPerSecond / 1e12)} TFLOP/s`
                                  : `${threeDigits(flopsPerSecond / 1e9)} GFLOP/s`;
  }

  function formatPercent(percent) {
    return isNumber(percent) ? `${percent.toFixed(1)}%` : '–';
  }

  function formatChange(fraction) {
    return isNumber(fraction) ? `${fraction >= 0 ? '+' : ''}${(100 * fraction).toFixed(1)}%` : '–';
  }

  function formatPValue(p) {
    if (!isNumber(p)) return '–';
    return p < 0.001 ? p.toExponential(1) : p.toFixed(3);
  }

  function formatTimestamp(iso) {
    return typeof iso === 'string' ? iso.replace('T', ' ').replace(/Z$/, ' UTC') : '–';
  }

  function shortCommit(commit) {
    return commit ? String(commit).slice(0, 7) : '?';
  }

  function plural(count, noun) {
    return `${count} ${noun}${count === 1 ? '' : 's'}`;
  }

  // ---------------------------------------------------------------- DOM

  // Builds an element. Strings become text nodes, never markup, so names from the database
  // (which may hold < or &) are shown as written.
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined) node.setAttribute(name, String(value));
    }
    for (const child of [].concat(...children)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function tableHead(labels, numericLabels) {
    return el('thead', null, el('tr', null, labels.map((label) =>
      el('th', {class: numericLabels.includes(label) ? 'number' : null}, label))));
  }

  function emptyState(text) {
    return el('p', {class: 'empty'}, text);
  }

  // A canvas in a sized box; the chart itself is created once the box is in the document.
  function chartBox(canvasClass, attributes, config, height) {
    const canvas = el('canvas', Object.assign({class: canvasClass}, attributes));
    pendingCharts.push(() => {
      new Chart(canvas, config);
      chartCount += 1;
    });
    return el('div', {class: 'chart-box', style: height ? `height: ${height}px` : null}, canvas);
  }

  function createPendingCharts() {
    while (pendingCharts.length) pendingCharts.shift()();
  }

  // ---------------------------------------------------------------- data checks

  // A clear message beats "Cannot read properties of undefined" when data.js does not match.
  function arrayField(object, field, where) {
    const value = object[field];
    if (!Array.isArray(value)) {
      throw new Error(`${where}: "${field}" must be an array, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  function objectOrNull(object, field, where) {
    const value = object[field];
    if (value === null) return null;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new Error(`${where}: "${field}" must be an object or null, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  // ---------------------------------------------------------------- chart helpers

  // Log tick labels only at 1, 2 and 5 times a power of ten; the others crowd the axis.
  function isRoundLogTick(value) {
    const mantissa = value / Math.pow(10, Math.floor(Math.log10(value)));
    return [1, 2, 5].some((round) => Math.abs(mantissa - round) < 1e-6);
  }

  // A time axis, logarithmic when the values span more than 10x so that both ends stay legible.
  function timeAxis(values, extra) {
    const positive = values.filter((v) => isNumber(v) && v > 0);
    const logarithmic = positive.length > 0 && Math.max(...positive) / Math.min(...positive) > 10;
    return Object.assign({
      type: logarithmic ? 'logarithmic' : 'linear',
      ticks: {callback: (value) => (logarithmic && !isRoundLogTick(value) ? '' : formatTime(value))},
    }, extra);
  }

  function axisTitle(text) {
    return {display: true, text};
  }

  // Draws a dashed red line where a new level starts (between the last point of the old level and
  // the first of the new one), labelled with the size of the change. The label goes beside the
  // line on the side and at the height the data leaves free: below a higher level, above a lower.
  function changePointLines(changePoints) {
    return {
      id: 'changePointLines',
      afterDatasetsDraw(chart) {
        const {ctx, chartArea} = chart;
        const x = chart.scales.x;
        ctx.save();
        for (const change of changePoints) {
          const at = change.index > 0
            ? (x.getPixelForValue(change.index - 1) + x.getPixelForValue(change.index)) / 2
            : x.getPixelForValue(0);
          ctx.strokeStyle = COLORS.change;
          ctx.lineWidth = 2;
          ctx.setLineDash([6, 4]);
          ctx.beginPath();
          ctx.moveTo(at, chartArea.top);
          ctx.lineTo(at, chartArea.bottom);
          ctx.stroke();
          const labelOnRight = at < chartArea.right - 130;  // the right side shows the new level
          const labelAtBottom = labelOnRight === (change.change > 0);
          ctx.fillStyle = COLORS.change;
          ctx.font = 'bold 12px sans-serif';
          ctx.textAlign = labelOnRight ? 'left' : 'right';
          ctx.textBaseline = labelAtBottom ? 'bottom' : 'top';
          ctx.fillText(`${formatChange(change.change)} at ${shortCommit(change.commit)}`,
                       at + (labelOnRight ? 6 : -6), labelAtBottom ? chartArea.bottom - 4 : chartArea.top + 4);
        }
        ctx.restore();
      },
    };
  }

  // ---------------------------------------------------------------- bench history

  // The y range of a history: at least +-3% around the data, so one point or a flat history does
  // not blow sub-0.1% noise up to the full height (with every tick label reading the same).
  function historyRange(points) {
    const values = [];
    for (const p of points) for (const v of [p.median_ns, p.min_ns, p.max_ns]) if (isNumber(v)) values.push(v);
    if (values.length === 0) return {grace: '10%'};
    const low = Math.min(...values), high = Math.max(...values), middle = (low + high) / 2;
    const half = Math.max((high - low) / 2 * 1.2, middle * 0.03);
    return {suggestedMin: Math.max(0, middle - half), suggestedMax: middle + half};
  }

  function historyChart(series, points, changePoints) {
    const changeAt = new Set(changePoints.map((change) => change.index));
    const pointStyle = (ifChange, otherwise) => points.map((p, i) => (changeAt.has(i) ? ifChange : otherwise));
    const config = {
      type: 'line',
      data: {
        labels: points.map((p) => shortCommit(p.commit)),
        datasets: [
          {label: 'median', data: points.map((p) => p.median_ns), borderColor: COLORS.tuned,
           pointStyle: pointStyle('triangle', 'circle'), pointRadius: pointStyle(7, 3),
           pointBackgroundColor: pointStyle(COLORS.change, COLORS.tuned),
           pointBorderColor: pointStyle(COLORS.change, COLORS.tuned)},
          // The min-max band: the max line filled down to the min line, both drawn invisibly.
          {label: 'min – max', data: points.map((p) => p.max_ns), fill: '+1', backgroundColor: COLORS.band,
           borderWidth: 0, pointRadius: 0, pointHitRadius: 0},
          {label: 'min', data: points.map((p) => p.min_ns), borderWidth: 0, pointRadius: 0, pointHitRadius: 0},
        ],
      },
      options: {
        responsive: true, maintainAspectRatio: false,
        interaction: {mode: 'index', intersect: false},
        scales: {x: {title: axisTitle('bench run (commit)')}, y: timeAxis([], historyRange(points))},
        plugins: {
          legend: {labels: {filter: (item) => item.text !== 'min'}},
          tooltip: {
            filter: (item) => item.datasetIndex === 0,
            callbacks: {
              title: (items) => {
                const p = points[items[0].dataIndex];
                return `${p.commit} · ${formatTimestamp(p.time)} · run #${p.bench_run_id}`;
              },
              label: (item) => {
                const p = points[item.dataIndex];
                return `median ${formatTime(p.median_ns)} (min ${formatTime(p.min_ns)} – max ${formatTime(p.max_ns)})`;
              },
              afterLabel: (item) => (changeAt.has(item.dataIndex) ? 'change point: a new level starts here' : ''),
            },
          },
        },
      },
      plugins: [changePointLines(changePoints)],
    };
    return chartBox('history-chart', {'data-benchmark': series.benchmark}, config, 240);
  }

  function changePointTable(changePoints) {
    if (changePoints.length === 0) return el('p', {class: 'no-change-points muted'}, 'no change point detected');
    return el('table', {class: 'change-points'},
      tableHead(['change at commit', 'before', 'after', 'change', 'p'], ['before', 'after', 'change', 'p']),
      el('tbody', null, changePoints.map((change) => el('tr', {class: change.change > 0 ? 'slower' : 'faster'},
        el('td', null, el('code', null, change.commit)),
        el('td', {class: 'number'}, formatTime(change.before_ns)),
        el('td', {class: 'number'}, formatTime(change.after_ns)),
        el('td', {class: 'number change'}, formatChange(change.change)),
        el('td', {class: 'number'}, formatPValue(change.p_value))))));
  }

  function renderSeries(series, where) {
    const points = arrayField(series, 'points', where);
    const changePoints = arrayField(series, 'change_points', where);
    const last = points[points.length - 1];
    return el('div', {class: 'series'},
      el('h4', {class: 'benchmark'}, series.benchmark),
      el('p', {class: 'muted'}, `${series.problem} · ${plural(points.length, 'bench run')}`,
         last ? ` · latest median ${formatTime(last.median_ns)}` : ''),
      historyChart(series, points, changePoints),
      changePointTable(changePoints));
  }

  function renderHistory(group, where) {
    const history = arrayField(group, 'history', where);
    const part = el('div', {class: 'part history'}, el('h3', null, 'Bench history'));
    if (history.length === 0) {
      part.append(emptyState('No bench history for this group: ktune bench has not run on it.'));
      return part;
    }
    part.append(el('p', {class: 'muted'}, 'Median time per bench run with its min–max range; a red dashed line ',
                   'and a red triangle mark a change point, where a new level starts.'));
    part.append(el('div', {class: 'series-grid'},
                   history.map((series, i) => renderSeries(series, `${where}.history[${i}]`))));
    return part;
  }

  // ---------------------------------------------------------------- tuned vs baseline

  function formatConfig(config) {
    return Object.entries(config || {}).map(([name, value]) => `${name}=${value}`).join(', ');
  }

  function latestTable(rows) {
    const numeric = ['tuned', 'default', 'baseline', 'speed-up over default', 'bandwidth', 'compute',
                     '% of measured ceiling'];
    return el('table', {class: 'latest'},
      tableHead(['problem'].concat(numeric, ['config']), numeric),
      el('tbody', null, rows.map((row) => {
        const speedUp = isNumber(row.default_ns) && isNumber(row.tuned_ns) ? row.default_ns / row.tuned_ns : null;
        return el('tr', null,
          el('td', null, el('code', null, row.problem)),
          el('td', {class: 'number'}, formatTime(row.tuned_ns)),
          el('td', {class: 'number'}, formatTime(row.default_ns)),
          el('td', {class: 'number'}, row.baseline ? `${formatTime(row.baseline_ns)} (${row.baseline})` : '–'),
          el('td', {class: `number ${speedUp > 1 ? 'faster' : ''}`}, speedUp === null ? '–' : `${speedUp.toFixed(2)}×`),
          el('td', {class: 'number'}, formatBandwidth(row.bytes_per_second)),
          el('td', {class: 'number'}, formatFlops(row.flops_per_second)),
          el('td', {class: 'number'}, formatPercent(row.percent_of_ceiling)),
          el('td', {class: 'config'}, el('details', null, el('summary', null, `from ${row.config_source}`),
                                         el('code', null, formatConfig(row.config)))));
      })));
  }

  function baselineChart(rows) {
    const times = (field) => rows.map((row) => (isNumber(row[field]) ? row[field] : null));
    const labels = rows.map((row) => (isNumber(row.percent_of_ceiling)
      ? [row.problem, `${formatPercent(row.percent_of_ceiling)} of ceiling`] : [row.problem, 'no baseline']));
    const all = [].concat(times('tuned_ns'), times('default_ns'), times('baseline_ns'));
    const config = {
      type: 'bar',
      data: {
        labels,
        datasets: [
          {label: 'tuned', data: times('tuned_ns'), backgroundColor: COLORS.tuned},
          {label: 'default config', data: times('default_ns'), backgroundColor: COLORS.defaultConfig},
          {label: 'baseline (measured ceiling)', data: times('baseline_ns'), backgroundColor: COLORS.baseline},
        ],
      },
      options: {
        indexAxis: 'y', responsive: true, maintainAspectRatio: false,
        scales: {x: timeAxis(all, {beginAtZero: true, title: axisTitle('time (shorter is faster)')})},
        plugins: {
          tooltip: {callbacks: {label: (item) => {
            const row = rows[item.dataIndex];
            const name = item.datasetIndex === 2 ? `baseline ${row.baseline}` : item.dataset.label;
            return `${name}: ${formatTime(item.raw)}`;
          }}},
        },
      },
    };
    return chartBox('baseline-chart', null, config, 70 + 64 * rows.length);
  }

  function renderLatest(group, where) {
    const latest = objectOrNull(group, 'latest', where);
    const part = el('div', {class: 'part latest'}, el('h3', null, 'Tuned vs baseline'));
    if (latest === null) {
      part.append(emptyState('No bench run for this group yet, so there is nothing to compare.'));
      return part;
    }
    const rows = arrayField(latest, 'rows', `${where}.latest`);
    part.append(el('p', {class: 'muted'}, `Latest bench run #${latest.bench_run_id} at commit `,
                   el('code', null, latest.commit), `, ${formatTimestamp(latest.time)}. The baseline (such as a plain copy of the same bytes) `,
                   'is the measured ceiling: % of ceiling is its time over the tuned time.'));
    if (rows.length === 0) {
      part.append(emptyState('The latest bench run measured no problem.'));
      return part;
    }
    part.append(latestTable(rows), baselineChart(rows));
    return part;
  }

  // ---------------------------------------------------------------- search

  // "812 evaluations: 790 ok, 22 wrong_result". The counts come from the optional
  // entry.outcome_counts ({outcome: count} over the whole run) when the C++ side subsampled the
  // evaluations, else from the evaluations listed.
  function outcomeSummary(entry, evaluations) {
    let counts = new Map();
    if (typeof entry.outcome_counts === 'object' && entry.outcome_counts !== null) {
      counts = new Map(Object.entries(entry.outcome_counts));
    } else {
      for (const evaluation of evaluations) {
        counts.set(evaluation.outcome, (counts.get(evaluation.outcome) || 0) + 1);
      }
    }
    const total = Array.from(counts.values()).reduce((sum, count) => sum + count, 0);
    // ok first, then the failures, most frequent first
    const ordered = Array.from(counts).sort((a, b) => (b[0] === 'ok') - (a[0] === 'ok') || b[1] - a[1]);
    const shown = total > evaluations.length ? ` (${evaluations.length} of them listed)` : '';
    return `${plural(total, 'evaluation')}: ${ordered.map(([name, count]) => `${count} ${name}`).join(', ')}${shown}`;
  }

  function convergenceChart(okEvaluations) {
    // Best-so-far as a step line: one point per improvement, then the last evaluation.
    const bestSoFar = [];
    for (const evaluation of okEvaluations) {
      if (bestSoFar.length === 0 || evaluation.median_ns < bestSoFar[bestSoFar.length - 1].y) {
        bestSoFar.push({x: evaluation.order, y: evaluation.median_ns});
      }
    }
    const last = okEvaluations[okEvaluations.length - 1];
    bestSoFar.push({x: last.order, y: bestSoFar[bestSoFar.length - 1].y});
    const medians = okEvaluations.map((e) => e.median_ns);
    const config = {
      type: 'scatter',
      data: {
        datasets: [
          {label: 'best so far', data: bestSoFar, showLine: true, stepped: 'after', borderColor: COLORS.tuned,
           backgroundColor: COLORS.tuned, borderWidth: 2, pointRadius: 0},
          {label: 'ok evaluation', data: okEvaluations.map((e) => ({x: e.order, y: e.median_ns})),
           backgroundColor: COLORS.faint, borderWidth: 0, pointRadius: 2},
        ],
      },
      options: {
        responsive: true, maintainAspectRatio: false,
        scales: {x: {title: axisTitle('evaluation'), ticks: {precision: 0}},
                 y: timeAxis(medians, {title: axisTitle('median time')})},
        plugins: {tooltip: {callbacks: {label: (item) => `#${item.raw.x}: ${formatTime(item.raw.y)}`}}},
      },
    };
    return chartBox('convergence-chart', null, config, 260);
  }

  // The values a parameter took, numbers in numeric order, then strings in order of appearance.
  function parameterValues(evaluations, parameter) {
    const seen = [];
    for (const evaluation of evaluations) {
      const value = evaluation.config[parameter];
      if (value !== undefined && !seen.includes(value)) seen.push(value);
    }
    const numbers = seen.filter((v) => typeof v === 'number').sort((a, b) => a - b);
    return numbers.concat(seen.filter((v) => typeof v !== 'number'));
  }

  function parameterChart(evaluations, okEvaluations, best, parameter) {
    const values = parameterValues(evaluations, parameter);
    const column = new Map(values.map((value, i) => [value, i]));
    // A fixed spread within each column (golden-ratio sequence over the evaluation number), so
    // points with equal values stay apart and every render looks the same.
    const jitter = (order) => ((order * GOLDEN_RATIO) % 1 - 0.5) * 0.6;
    const point = (e) => ({x: column.get(e.config[parameter]) + jitter(e.order), y: e.median_ns, order: e.order,
                           value: e.config[parameter]});
    const plotted = okEvaluations.filter((e) => column.has(e.config[parameter]));
    const config = {
      type: 'scatter',
      data: {
        datasets: [
          {label: 'best', data: column.has(best.config[parameter]) ? [point(best)] : [], backgroundColor: COLORS.best,
           borderColor: '#92400e', borderWidth: 1, pointRadius: 5},
          {label: 'ok evaluation', data: plotted.map(point), backgroundColor: 'rgba(37, 99, 235, 0.35)',
           borderWidth: 0, pointRadius: 2.5},
        ],
      },
      options: {
        responsive: true, maintainAspectRatio: false,
        scales: {
          // One tick per value at the column centres; the half-column margins keep the jitter inside.
          x: {type: 'linear', min: -0.5, max: values.length - 0.5,
              afterBuildTicks: (axis) => { axis.ticks = values.map((value, i) => ({value: i})); },
              ticks: {autoSkip: false, maxRotation: 0, callback: (tick) => String(values[tick])},
              grid: {display: false}},
          y: timeAxis(plotted.map((e) => e.median_ns)),
        },
        plugins: {
          legend: {display: false},
          tooltip: {callbacks: {label: (item) =>
            `${parameter}=${item.raw.value}: ${formatTime(item.raw.y)} (evaluation #${item.raw.order})`}},
        },
      },
    };
    return el('figure', {class: 'parameter'}, el('figcaption', null, parameter),
              chartBox('parameter-chart', {'data-parameter': parameter}, config, 190));
  }

  function renderTuningEntry(entry, where) {
    const evaluations = arrayField(entry, 'evaluations', where);
    const parameters = arrayField(entry, 'parameters', where);
    evaluations.forEach((e, i) => {
      if (typeof e.config !== 'object' || e.config === null) throw new Error(`${where}.evaluations[${i}]: no "config" object`);
    });
    const ok = evaluations.filter((e) => e.outcome === 'ok' && isNumber(e.median_ns));
    const best = ok.reduce((a, b) => (b.median_ns < a.median_ns ? b : a), ok[0]);
    const facts = [outcomeSummary(entry, evaluations)];
    if (isNumber(entry.space_valid)) facts.push(`${entry.space_valid} valid configs in the space`);
    if (best) facts.push(`best ${formatTime(best.median_ns)} at evaluation #${best.order}`);
    const part = el('div', {class: 'tuning-entry'},
      el('h4', null, el('code', null, entry.problem)),
      el('p', {class: 'caption'}, facts.join(' · ')));
    if (!best) {
      part.append(emptyState('No evaluation succeeded, so there is no time to plot.'));
      return part;
    }
    part.append(
      el('p', {class: 'muted'}, 'Search convergence: the best median so far against the evaluation number; ',
         'dots are the individual successful evaluations.'),
      convergenceChart(ok),
      el('p', {class: 'muted'}, 'Parameter effect: median time of every successful evaluation by parameter ',
         'value (spread sideways so points do not hide each other); the best config in orange.'),
      el('div', {class: 'parameter-grid'},
         parameters.map((parameter) => parameterChart(evaluations, ok, best, parameter))));
    part.append(el('p', {class: 'muted'}, 'Best config: ', el('code', null, formatConfig(best.config))));
    return part;
  }

  function renderTuning(group, where) {
    const tuning = arrayField(group, 'tuning', where);
    const part = el('div', {class: 'part tuning'}, el('h3', null, 'Search'));
    if (tuning.length === 0) {
      part.append(emptyState('No tuning data for this group: ktune tune has not run on it.'));
      return part;
    }
    part.append(...tuning.map((entry, i) => renderTuningEntry(entry, `${where}.tuning[${i}]`)));
    return part;
  }

  // ---------------------------------------------------------------- page

  function groupTitle(group) {
    return `${group.family} · ${group.backend} · ${group.device}`;
  }

  function renderHeader(report) {
    const facts = [
      ['generated', formatTimestamp(report.generated_at)],
      ['ktune', `${report.ktune_version || '?'} (commit ${shortCommit(report.git_commit)})`],
      ['database', report.database || '?'],
    ];
    document.getElementById('report-meta').append(
      ...facts.map(([name, value]) => el('div', null, el('dt', null, name), el('dd', null, value))));
  }

  function renderNavigation(groups) {
    if (groups.length === 0) return;
    document.getElementById('group-nav').append(el('ul', null, groups.map((group) => el('li', null,
      el('a', {href: `#${group.id}`}, groupTitle(group)),
      el('span', {class: 'muted'}, ` ${plural((group.history || []).length, 'benchmark')}, `,
         `${plural((group.tuning || []).length, 'tuned problem')}`)))));
  }

  function renderGroup(group, where) {
    if (typeof group !== 'object' || group === null || typeof group.id !== 'string') {
      throw new Error(`${where}: a group needs a string "id"`);
    }
    where = `${where} ("${group.id}")`;
    return el('section', {class: 'group', id: group.id},
      el('h2', null, groupTitle(group)),
      el('p', {class: 'muted fingerprint'}, group.device_fingerprint),
      renderHistory(group, where), renderLatest(group, where), renderTuning(group, where));
  }

  function render() {
    if (typeof Chart === 'undefined') throw new Error('chart.min.js did not load; it belongs next to index.html');
    const report = window.KTUNE_REPORT;
    if (typeof report !== 'object' || report === null) {
      throw new Error('data.js did not define window.KTUNE_REPORT; it belongs next to index.html');
    }
    if (report.schema !== 1) throw new Error(`data.js holds schema ${report.schema}; this page reads schema 1`);
    Chart.defaults.animation = false;  // a headless screenshot must show finished charts
    Chart.defaults.font.size = 11;
    Chart.defaults.plugins.legend.labels.boxWidth = 12;

    renderHeader(report);
    const groups = arrayField(report, 'groups', 'report');
    renderNavigation(groups);
    const main = document.getElementById('groups');
    if (groups.length === 0) {
      main.append(emptyState('The database holds no tuning or bench results yet.'));
    }
    groups.forEach((group, i) => {
      main.append(renderGroup(group, `groups[${i}]`));
      createPendingCharts();
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    try {
      render();
      document.body.dataset.rendered = 'true';
    } catch (error) {
      document.body.dataset.rendered = 'false';
      showError(`The report could not be rendered: ${describeError(error)}`);
      if (error instanceof Error) error.shownOnPage = true;
      throw error;  // and on to the console
    } finally {
      document.body.dataset.charts = String(chartCount);
    }
  });
}());
