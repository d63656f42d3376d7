//! The style sheet and the script every page carries inline: a page fetches nothing.
//!
//! The content never depends on the script: collapsed parts are `<details>` elements, which
//! open without it. The script adds keyboard moves between turns and a control that opens or
//! closes every collapsed part. Nothing is told by colour alone: every token bar segment has a
//! pattern and its number beside it, and every outcome is a word.

/// The style sheet.
pub const STYLE: &str = r#"
:root{--fg:#1d1d1f;--bg:#fff;--muted:#5f6368;--line:#d0d4d9;--ok:#116329;--bad:#a40e26;--code:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1200px;padding:1rem 1.5rem 4rem}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.2rem;margin:1.4rem 0 .4rem}
h3{font-size:1rem;margin:.8rem 0 .3rem}
pre,code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--code);border:1px solid var(--line);border-radius:4px;padding:.5rem .7rem;overflow-x:auto;white-space:pre-wrap;word-break:break-word;margin:.3rem 0}
table{border-collapse:collapse;margin:.3rem 0}
th,td{border:1px solid var(--line);padding:.2rem .5rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.5rem 0}
dl.summary dt{font-weight:600}
dl.summary dd{margin:0}
.mission{white-space:pre-wrap;border-left:3px solid var(--line);padding-left:.7rem;color:var(--muted)}
.outcome-returned{color:var(--ok)}
.outcome-failed{color:var(--bad)}
nav.turns ol{display:flex;flex-wrap:wrap;gap:.3rem;list-style:none;padding:0}
nav.turns a{display:inline-block;border:1px solid var(--line);border-radius:4px;padding:.1rem .5rem;text-decoration:none;color:inherit}
nav.turns a.error{border-style:dashed;border-color:var(--bad)}
section.turn{border-top:2px solid var(--line);margin-top:1.5rem;padding-top:.3rem}
section.turn:focus{outline:3px solid #0b57d0;outline-offset:4px}
.cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}
@media (max-width:800px){.cols{grid-template-columns:1fr}}
.program .c{color:#6a737d;font-style:italic}.program .s{color:#0a3069}.program .k{color:#8250df}
.program .n{color:#0550ae}.program .f{color:#cf222e;font-weight:600}.program .t{color:#116329;font-weight:600}
.status{font-weight:600}.status.error{color:var(--bad)}.status.ok{color:var(--ok)}
pre.error{border-color:var(--bad)}
ol.calls{padding-left:1.4rem}ol.calls li{margin:.2rem 0}
.muted{color:var(--muted)}
.bar{display:flex;height:1.1rem;border:1px solid var(--fg);width:100%;max-width:40rem;margin:.3rem 0}
.bar span{display:block;height:100%}
.seg-input{background:#0b57d0}
.seg-cache-read{background:repeating-linear-gradient(45deg,#1e8e3e 0 4px,#fff 4px 6px)}
.seg-cache-write{background:repeating-linear-gradient(-45deg,#b06000 0 4px,#fff 4px 6px)}
.seg-output{background:repeating-linear-gradient(90deg,#5f6368 0 2px,#fff 2px 4px)}
.key{display:inline-block;width:.9rem;height:.9rem;border:1px solid var(--fg);vertical-align:middle;margin-right:.2rem}
.message{border-left:3px solid var(--line);padding-left:.6rem;margin:.4rem 0}
.role{font-weight:600;text-transform:uppercase;font-size:.8rem;letter-spacing:.04em}
details>summary{cursor:pointer}
#controls{position:sticky;top:0;background:var(--bg);padding:.3rem 0;border-bottom:1px solid var(--line);z-index:1}
kbd{border:1px solid var(--line);border-radius:3px;padding:0 .25rem;font-size:.85em}
"#;

/// The script: `j`/`k` (or `n`/`p`) move to the next or previous turn, `o` opens and `c` closes
/// every collapsed part, and a pair of buttons does the same for the mouse.
pub const SCRIPT: &str = r#"
(function(){
var turns=[].slice.call(document.querySelectorAll('section.turn'));
var at=-1;
function go(i){if(!turns.length)return;at=Math.max(0,Math.min(turns.length-1,i));turns[at].focus();turns[at].scrollIntoView({block:'start'});}
function all(open){[].forEach.call(document.querySelectorAll('details'),function(d){d.open=open;});}
var bar=document.getElementById('controls');
if(bar){bar.hidden=false;
document.getElementById('open-all').addEventListener('click',function(){all(true);});
document.getElementById('close-all').addEventListener('click',function(){all(false);});}
document.addEventListener('focusin',function(e){var i=turns.indexOf(e.target.closest&&e.target.closest('section.turn'));if(i>=0)at=i;});
document.addEventListener('keydown',function(e){
if(e.altKey||e.ctrlKey||e.metaKey||/^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName))return;
if(e.key==='j'||e.key==='n'){go(at+1);e.preventDefault();}
else if(e.key==='k'||e.key==='p'){go(at-1);e.preventDefault();}
else if(e.key==='o'){all(true);}
else if(e.key==='c'){all(false);}
});
})();
"#;
