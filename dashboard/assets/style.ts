/**
 * The dashboard's style sheet. Internal.
 *
 * @module
 */

/** CSS of the page. */
export const style: string = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2430; background: #f6f7f9; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1rem; background: #1d2430; color: #fff; }
header nav { display: flex; gap: 1rem; flex: 1; }
header a { color: #c9d3e3; text-decoration: none; }
header a.active { color: #fff; border-bottom: 2px solid #5fa8ff; }
.badge { background: #d9534f; color: #fff; border-radius: 8px; padding: 0 .4rem; font-size: 12px; }
.badge:empty { display: none; }
.live { font-size: 12px; padding: .1rem .5rem; border-radius: 8px; background: #2e7d32; }
.live.off { background: #8a6d3b; }
main { padding: 1rem; }
h2 { font-size: 15px; margin: 1.2rem 0 .4rem; }
h2 small { color: #6b7280; font-weight: normal; }
table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: .8rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
th { background: #eef1f5; font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bad { color: #b42318; font-weight: 600; }
pre { margin: 0; max-width: 40rem; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
.toolbar { display: flex; gap: .6rem; align-items: center; margin-bottom: .6rem; }
button { padding: .25rem .7rem; border: 1px solid #9aa4b2; border-radius: 4px; background: #fff; cursor: pointer; }
button.danger { border-color: #b42318; color: #b42318; }
.empty { color: #6b7280; font-style: italic; }
.error { color: #b42318; }
.note { color: #6b7280; font-size: 12px; }
.bar-row { display: flex; align-items: center; gap: .5rem; margin: 2px 0; }
.bar-name { width: 22rem; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.bar-track { position: relative; flex: 1; height: 14px; background: #eef1f5; }
.bar { position: absolute; height: 14px; background: #5fa8ff; min-width: 2px; }
.bar.failed { background: #d9534f; }
.bar.wait { background: repeating-linear-gradient(90deg, #c7cdd6 0 4px, transparent 4px 7px); }
.logs { margin: 0 0 .3rem 22.5rem; font: 12px monospace; color: #374151; }
#login { background: #fff; padding: 1rem; max-width: 30rem; }
#login input { width: 100%; margin: .4rem 0; }
`;
