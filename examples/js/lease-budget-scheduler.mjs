// Bounded authority without I/O: a Worker's Scheduler picks work, an Execution Lease bounds the
// run, and the budget ledger charges each tool call up the Mission tree (§11, §12). The core has
// no clock: every time is an argument (a Date or milliseconds).
//
//   npm install missionweaveprotocol && node lease-budget-scheduler.mjs
import { BudgetExceededError, BudgetLedger, Dispatch, ExecutionLease, LeaseError, Scheduler } from 'missionweaveprotocol';

const T0 = Date.parse('2026-07-15T09:00:00Z');
const at = (seconds) => T0 + seconds * 1000;

// 1. Budgets: a Mission with two WorkItems; a WorkItem's limit is reserved from its Mission.
const ledger = new BudgetLedger();
ledger.registerMission('urn:missionweaveprotocol:mission:report', { financialMicrounits: 5_000_000, toolCalls: 10 }, { currency: 'USD' });
ledger.registerWorkItem('urn:missionweaveprotocol:work-item:search', 'urn:missionweaveprotocol:mission:report', { financialMicrounits: 2_000_000, toolCalls: 3 });
ledger.registerWorkItem('urn:missionweaveprotocol:work-item:write', 'urn:missionweaveprotocol:mission:report', { financialMicrounits: 1_000_000, toolCalls: 2 });

// 2. The Worker's Scheduler: two slots, weighted-fair between Groups.
const scheduler = new Scheduler({ capacitySlots: 2, groups: { 'urn:missionweaveprotocol:group:research': { weight: 2 } } });
for (const workId of ['urn:missionweaveprotocol:work-item:search', 'urn:missionweaveprotocol:work-item:write']) {
  const decision = scheduler.admit({ workId, groupId: 'urn:missionweaveprotocol:group:research' }, at(0));
  console.log(`admit ${workId.split(':').pop()}: ${decision.reason}`);
}

// 3. Dispatch, and bound each run with an Execution Lease.
const leases = new Map();
for (const action of scheduler.schedule(at(1))) {
  if (!(action instanceof Dispatch)) continue;
  const lease = new ExecutionLease({
    leaseId: `urn:missionweaveprotocol:lease:${action.workId.split(':').pop()}`,
    missionId: 'urn:missionweaveprotocol:mission:report',
    groupId: action.groupId,
    workItemId: action.workId,
    holderAgentId: 'urn:missionweaveprotocol:agent:worker-1',
    sessionEpoch: 1,
    ownershipEpoch: 1,
    issuedAt: at(1),
    startsAt: at(1),
    expiresAt: at(61),
  });
  leases.set(action.workId, { lease, generation: action.generation });
  console.log(`dispatch ${action.workId.split(':').pop()} (run ${action.generation}), lease until ${new Date(lease.expiresAt).toISOString()}`);
}

// 4. The search run makes tool calls; the fourth exceeds its WorkItem budget and is refused.
const search = 'urn:missionweaveprotocol:work-item:search';
for (let call = 1; call <= 4; call += 1) {
  try {
    ledger.consume(search, { financialMicrounits: 400_000, toolCalls: 1 });
    console.log(`tool call ${call}: charged, ${ledger.remaining(['work_item', search]).toolCalls} left`);
  } catch (error) {
    if (!(error instanceof BudgetExceededError)) throw error;
    console.log(`tool call ${call}: refused ${error.code} (${error.dimension})`);
  }
}
console.log(`mission spent ${ledger.usage(['mission', 'urn:missionweaveprotocol:mission:report']).financialMicrounits} micro-USD`);

// 5. Finish: renew the write lease once, complete both runs, release the leases.
const write = leases.get('urn:missionweaveprotocol:work-item:write');
write.lease.renew(at(30), at(120));
for (const [workId, { lease, generation }] of leases) {
  scheduler.apply(workId, { kind: 'completed', generation }, at(40));
  lease.release(at(40), 'completed');
  console.log(`${workId.split(':').pop()}: completed, lease ${lease.state}`);
}

// 6. A late claim on a closed lease is refused with its wire code.
try {
  write.lease.checkClaim({ agentId: 'urn:missionweaveprotocol:agent:worker-1', leaseId: write.lease.leaseId, sessionEpoch: 1, ownershipEpoch: 1 }, at(41));
} catch (error) {
  if (!(error instanceof LeaseError)) throw error;
  console.log(`late claim: ${error.code} (${error.reason})`);
}
console.log(`scheduler: ${scheduler.size} items left`);
