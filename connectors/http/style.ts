/** The dashboard's one stylesheet (served as /style.css, so the page's CSP can forbid inline styles). */
export const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --line: #d0d5dd; --bg: #fff; --card: #f6f7f9;
  --ok: #067647; --bad: #b42318; --accent: #175cd3; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e7ec; --muted: #98a2b3; --line: #344054; --bg: #101828; --card: #1d2939; } }
* { box-sizing: border-box; }
a { color: var(--accent); }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header h1 { font-size: 1.1rem; margin: 0; }
nav { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
nav a { color: var(--fg); text-decoration: none; padding: .2rem 0; }
nav a[aria-current] { border-bottom: 2px solid var(--accent); }
.logout { margin: 0; }
main { padding: 1rem 1.2rem; max-width: 72rem; }
h2 { margin-top: .2rem; } h3 { margin: 1.2rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code { font: .85rem ui-monospace, monospace; word-break: break-all; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: .8rem; }
.card, .approval, .run { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .7rem .9rem; }
.card h3 { margin: 0 0 .3rem; font-size: 1rem; } .card p { margin: .2rem 0; }
.approvals, .runs { list-style: none; padding: 0; display: grid; gap: .6rem; }
.approval form { margin-top: .5rem; display: flex; gap: .5rem; }
button { font: inherit; padding: .35rem .9rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; }
button.deny { background: var(--bad); border-color: var(--bad); color: #fff; }
.ok, .approved, .auto, .done { color: var(--ok); } .bad, .denied, .expired, .blocked, .error { color: var(--bad); }
.hint, .empty { color: var(--muted); font-size: .88rem; }
.notice { padding: .6rem .9rem; border-radius: 6px; border: 1px solid; }
.notice.good { border-color: var(--ok); color: var(--ok); } .notice.bad { border-color: var(--bad); color: var(--bad); }
.login { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; }
.login input, .filters input, .filters select { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.filters { display: flex; gap: .8rem; align-items: end; flex-wrap: wrap; margin-bottom: .8rem; }
.filters label, .login label { display: flex; flex-direction: column; font-size: .85rem; gap: .2rem; }
.calls { margin: .4rem 0; padding-left: 1.2rem; font-size: .9rem; }
.summary { margin-top: .3rem; white-space: pre-wrap; }
.asked { margin-top: .3rem; } .reply { margin-top: .3rem; color: var(--muted); white-space: pre-wrap; }
`;
