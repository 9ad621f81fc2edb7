// The Vite app's whole code: the package's default entry and its verify-only entry, as an app
// imports them; the test drives them through window.__mwp.
import * as full from 'missionweaveprotocol';
import * as verify from 'missionweaveprotocol/verify';

window.__mwp = { full, verify };
document.body.dataset.ready = full.backend;
