/** The PNG chart: throughput by mode against the DynamoDB Local floor, and latency by mode (log scales). */
import { Canvas, type Rgb } from './png.js';
import type { BenchResults } from './report.js';

const INK: Rgb = [33, 33, 33];
const GREY: Rgb = [120, 120, 120];
const GRID: Rgb = [225, 225, 225];
const OP_COLOURS: Record<string, Rgb> = { send: [66, 133, 244], 'receive+commit': [230, 145, 0], lifecycle: [15, 157, 88] };
const PUT_FLOOR: Rgb = [219, 68, 55];
const TX_FLOOR: Rgb = [142, 36, 170];
const P50: Rgb = [25, 90, 160];
const P95: Rgb = [90, 150, 215];
const P99: Rgb = [175, 205, 240];
const TARGET: Rgb = [219, 68, 55];
const SCALE_COLOURS: Record<string, Rgb> = { standard: [66, 133, 244], 'standard-p16': [103, 58, 183], 'standard-p64': [219, 68, 55], 'fifo-many': [15, 157, 88], 'fifo-many-p256': [0, 172, 193], 'fifo-hot': [230, 145, 0], 'fifo-hot-seq': [121, 85, 72] };
/** Issue 19's target for one topic, unbatched (messages/s on AWS). */
const SCALE_TARGET = 10_000;

const WIDTH = 1500;
const LABEL_W = 540;
const PLOT_X = LABEL_W + 20;
const PLOT_W = WIDTH - PLOT_X - 200;
const ROW = 22;
const BAR = 15;

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 10 ? n.toFixed(1) : n.toFixed(2));

interface Axis {
  min: number;
  max: number;
}
const axisFor = (values: number[], floor: number): Axis => {
  const positive = values.filter((v) => v > 0);
  const hi = Math.max(floor * 10, ...positive);
  const lo = Math.min(hi / 10, ...positive);
  return { min: 10 ** Math.floor(Math.log10(Math.max(lo, 1e-3))), max: 10 ** Math.ceil(Math.log10(hi)) };
};
const xOf = (axis: Axis, v: number) => PLOT_X + (Math.log10(Math.min(Math.max(v, axis.min), axis.max) / axis.min) / Math.log10(axis.max / axis.min)) * PLOT_W;

function drawAxis(c: Canvas, axis: Axis, top: number, bottom: number) {
  for (let v = axis.min; v <= axis.max * 1.0001; v *= 10) {
    const x = Math.round(xOf(axis, v));
    c.line(x, top, x, bottom, GRID);
    for (const m of [2, 5]) if (v * m < axis.max) c.line(Math.round(xOf(axis, v * m)), top, Math.round(xOf(axis, v * m)), bottom, [240, 240, 240]);
    const label = v >= 1000 ? `${v / 1000}K` : String(v);
    c.text(x - Canvas.textWidth(label) / 2, bottom + 6, label, GREY);
  }
}

export function renderChart(r: BenchResults): Buffer {
  const cells = r.cells;
  const lifecycle = cells.filter((x) => x.op === 'lifecycle' && !x.failed && (x.endToEnd?.count ?? 0) > 0);
  const latencyRows = [
    ...r.latency.map((l) => ({ label: `${l.topicType} send→receive (idle, ${l.consumers} long polls)`, p50: l.sendToReceive.p50, p95: l.sendToReceive.p95, p99: l.sendToReceive.p99 })),
    ...lifecycle.map((x) => ({ label: `${x.id.replace(' lifecycle', '')} under load`, p50: x.endToEnd?.p50 ?? 0, p95: x.endToEnd?.p95 ?? 0, p99: x.endToEnd?.p99 ?? 0 })),
    ...(r.scheduled.lateness && (r.scheduled.received ?? 0) > 0
      ? [{ label: `scheduled lateness (${r.scheduled.delays ?? ''})`, p50: Math.max(r.scheduled.lateness.p50, 0.01), p95: Math.max(r.scheduled.lateness.p95, 0.01), p99: Math.max(r.scheduled.lateness.p99, 0.01) }]
      : []),
    ...(r.wake ?? []).filter((w) => w.samples > 0).map((w) => ({ label: `wake ${w.id}, stream path`, p50: w.p50, p95: w.p95, p99: w.p99 })),
  ];
  const panel1Top = 110;
  const panel1Bottom = panel1Top + cells.length * ROW + 8;
  const panel2Title = panel1Bottom + 90;
  const panel2Top = panel2Title + 70;
  const panel2Bottom = panel2Top + latencyRows.length * ROW + 8;
  const scaleRows = r.scale ?? [];
  const panel3Title = panel2Bottom + 90;
  const panel3Top = panel3Title + 40;
  const panel3Bottom = panel3Top + scaleRows.length * ROW + 8;
  const idleRows = r.idle ?? [];
  const panel4Title = (scaleRows.length > 0 ? panel3Bottom : panel2Bottom) + 90;
  const panel4Top = panel4Title + 40;
  const panel4Bottom = panel4Top + idleRows.length * ROW + 8;
  const height = (idleRows.length > 0 ? panel4Bottom : scaleRows.length > 0 ? panel3Bottom : panel2Bottom) + 110;
  const c = new Canvas(WIDTH, height);

  c.text(20, 16, `SLUICE BENCHMARK  ${r.mode.toUpperCase()} RUN  ${r.date.slice(0, 16).replace('T', ' ')} UTC`, INK, 3);
  const others = cells.map((x) => x.cpu.others).filter((x): x is number => x !== undefined);
  const busy = others.length ? others.reduce((a, b) => a + b, 0) / others.length : 0;
  c.text(
    20,
    50,
    `local runtime on DynamoDB Local, ${r.machine.cpus} CPUs, concurrency ${String(r.config.concurrency)}, ${String(r.config.bodyBytes)} B messages` +
      (busy > 0.1 ? `; other processes kept ${busy.toFixed(1)} cores busy on average` : ''),
    busy > 0.1 ? [200, 60, 40] : GREY,
  );

  // ── panel 1: throughput ──
  const putFloor = r.floor.find((f) => f.kind === 'PutItem')?.perSecond ?? 0;
  const txFloor = r.floor.find((f) => f.kind !== 'PutItem')?.perSecond ?? 0;
  c.text(20, 80, 'THROUGHPUT, MESSAGES/S (LOG SCALE)', INK);
  const a1 = axisFor(cells.map((x) => x.perSecond), Math.max(putFloor, 1));
  drawAxis(c, a1, panel1Top - 6, panel1Bottom);
  cells.forEach((cell, i) => {
    const y = panel1Top + i * ROW;
    c.textRight(LABEL_W, y + 1, cell.id, INK);
    if (i > 0 && cell.batch !== cells[i - 1]?.batch) c.line(20, y - 4, PLOT_X + PLOT_W, y - 4, GREY);
    if (cell.failed || cell.messages === 0) {
      c.text(PLOT_X + 6, y + 1, cell.failed ? 'failed' : 'no messages', GREY);
      return;
    }
    const x1 = xOf(a1, cell.perSecond);
    c.fillRect(PLOT_X, y, Math.max(1, x1 - PLOT_X), BAR, OP_COLOURS[cell.op] ?? GREY);
    c.text(x1 + 6, y + 1, fmt(cell.perSecond), INK);
  });
  for (const [value, colour, name] of [
    [putFloor, PUT_FLOOR, 'PutItem floor'],
    [txFloor, TX_FLOOR, 'TransactWrite(2) floor'],
  ] as const) {
    if (value <= 0) continue;
    const x = Math.round(xOf(a1, value));
    c.line(x, panel1Top - 10, x, panel1Bottom, colour, 2, 6);
  }
  // legend
  let lx = 20;
  const ly = panel1Bottom + 40;
  for (const [name, colour] of Object.entries(OP_COLOURS)) {
    c.fillRect(lx, ly, 24, BAR, colour);
    c.text(lx + 32, ly + 1, name, INK);
    lx += 32 + Canvas.textWidth(name) + 40;
  }
  for (const [value, colour, name] of [
    [putFloor, PUT_FLOOR, 'PutItem floor'],
    [txFloor, TX_FLOOR, 'TransactWrite(2) floor'],
  ] as const) {
    c.line(lx, ly + 7, lx + 24, ly + 7, colour, 2, 6);
    const label = `${name} ${fmt(value)}/s`;
    c.text(lx + 32, ly + 1, label, INK);
    lx += 32 + Canvas.textWidth(label) + 40;
  }

  // ── panel 2: latency ──
  c.text(20, panel2Title, 'LATENCY, MS (LOG SCALE): SEND → RECEIVED, AND SCHEDULED LATENESS', INK);
  const a2 = axisFor(latencyRows.flatMap((l) => [l.p50, l.p99]), 100);
  drawAxis(c, a2, panel2Top - 6, panel2Bottom);
  latencyRows.forEach((l, i) => {
    const y = panel2Top + i * ROW;
    c.textRight(LABEL_W, y + 1, l.label, INK);
    for (const [v, colour] of [
      [l.p99, P99],
      [l.p95, P95],
      [l.p50, P50],
    ] as const) {
      c.fillRect(PLOT_X, y, Math.max(1, xOf(a2, v) - PLOT_X), BAR, colour);
    }
    c.text(xOf(a2, l.p99) + 6, y + 1, `${fmt(l.p50)} / ${fmt(l.p99)}`, INK);
  });
  const t100 = Math.round(xOf(a2, 100));
  c.line(t100, panel2Top - 10, t100, panel2Bottom, TARGET, 2, 6);
  lx = 20;
  const ly2 = panel2Bottom + 40;
  for (const [name, colour] of [
    ['p50', P50],
    ['p95', P95],
    ['p99', P99],
  ] as const) {
    c.fillRect(lx, ly2, 24, BAR, colour);
    c.text(lx + 32, ly2 + 1, name, INK);
    lx += 32 + Canvas.textWidth(name) + 40;
  }
  c.line(lx, ly2 + 7, lx + 24, ly2 + 7, TARGET, 2, 6);
  c.text(lx + 32, ly2 + 1, '100 ms target (p99)   labels: p50 / p99', INK);

  // ── panel 3: scale rows, the modelled AWS ceiling ──
  if (scaleRows.length > 0) {
    c.text(20, panel3Title, 'MODELLED AWS CEILING OF ONE TOPIC, MESSAGES/S (LOG SCALE); LABELS: CEILING, LOST RACES PER APPEND', INK);
    const a3 = axisFor(scaleRows.map((x) => x.awsCeilingMsgPerSecond), SCALE_TARGET);
    drawAxis(c, a3, panel3Top - 6, panel3Bottom);
    scaleRows.forEach((row, i) => {
      const y = panel3Top + i * ROW;
      c.textRight(LABEL_W, y + 1, `${row.id}`, INK);
      if (i > 0 && (row.topic !== scaleRows[i - 1]?.topic || row.batch !== scaleRows[i - 1]?.batch)) c.line(20, y - 4, PLOT_X + PLOT_W, y - 4, GREY);
      if (row.awsCeilingMsgPerSecond <= 0) {
        c.text(PLOT_X + 6, y + 1, 'nothing measured', GREY);
        return;
      }
      const x1 = xOf(a3, row.awsCeilingMsgPerSecond);
      c.fillRect(PLOT_X, y, Math.max(1, x1 - PLOT_X), BAR, SCALE_COLOURS[row.topic] ?? GREY);
      c.text(x1 + 6, y + 1, `${fmt(row.awsCeilingMsgPerSecond)}  ${row.lostRacesPerAppend.toFixed(2)}`, INK);
    });
    const t = Math.round(xOf(a3, SCALE_TARGET));
    c.line(t, panel3Top - 10, t, panel3Bottom, TARGET, 2, 6);
    lx = 20;
    const ly3 = panel3Bottom + 40;
    for (const [name, colour] of Object.entries(SCALE_COLOURS)) {
      c.fillRect(lx, ly3, 24, BAR, colour);
      c.text(lx + 32, ly3 + 1, name, INK);
      lx += 32 + Canvas.textWidth(name) + 40;
    }
    c.line(lx, ly3 + 7, lx + 24, ly3 + 7, TARGET, 2, 6);
    c.text(lx + 32, ly3 + 1, '10,000 msg/s target (issue 19, unbatched)', INK);
  }

  // ── panel 4: one idle consumer's modelled AWS month ──
  if (idleRows.length > 0) {
    c.text(20, panel4Title, 'ONE IDLE CONSUMER, MODELLED USD PER 30-DAY MONTH (LOG SCALE, FUNCTION URL, RECEIVE AT 128 MB); BLACK TICK: TARGET; RED: MISSED', INK);
    const a4 = axisFor([...idleRows.map((x) => x.usdPerMonth), ...idleRows.map((x) => x.targetUsd)], 1);
    drawAxis(c, a4, panel4Top - 6, panel4Bottom);
    idleRows.forEach((row, i) => {
      const y = panel4Top + i * ROW;
      c.textRight(LABEL_W, y + 1, row.id, INK);
      const met = row.usdPerMonth <= row.targetUsd + 1e-12;
      if (row.usdPerMonth > 0) {
        const x1 = xOf(a4, row.usdPerMonth);
        c.fillRect(PLOT_X, y, Math.max(1, x1 - PLOT_X), BAR, met ? OP_COLOURS.lifecycle ?? GREY : TARGET);
      }
      const t = Math.round(xOf(a4, row.targetUsd));
      c.line(t, y - 3, t, y + BAR + 3, INK, 2);
      c.text(Math.max(xOf(a4, row.usdPerMonth), t) + 8, y + 1, `${row.usdPerMonth < 0.01 ? row.usdPerMonth.toPrecision(2) : row.usdPerMonth.toFixed(2)} USD (target ${row.targetUsd})`, INK);
    });
  }
  return c.png();
}
