import { describe, expect, it, vi } from 'vitest';
import { AuthorizationEngine, type CheckRequest } from '../../../src/modules/fga/engine/authorization-engine.ts';
import { compileModel } from '../../../src/modules/fga/model.ts';
import { CheckAnswers } from '../../../src/modules/fga/serving/check-answers.ts';
import { parseTuple } from '../../../src/modules/fga/tuple.ts';
import { checkOf, engineFor } from './support/fga-fixture.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type document
  relations
    define viewer: [user, group#member]
`;

/** A CheckAnswers over one store and model, with a spy on the engine's evaluations. */
function fixture(capacity = 10_000) {
  const { typesystem, store } = engineFor(MODEL, ['group:eng#member@user:anne', 'document:plan#viewer@group:eng#member']);
  const answers = new CheckAnswers(capacity);
  const evaluations = vi.fn();
  const ask = (request: CheckRequest, tenant = 'acme', model = typesystem) =>
    answers.answer(tenant, model, store, request, () => {
      evaluations(request);
      return new AuthorizationEngine(model, store).answerCheck(request);
    });
  return { typesystem, store, ask, evaluations };
}

describe('CheckAnswers', () => {
  it('answers a question asked again from what it kept, while the index and the model stay as they were', () => {
    const { ask, evaluations } = fixture();
    expect(ask(checkOf('document:plan#viewer@user:anne'))).toEqual({ allowed: true });
    expect(ask(checkOf('document:plan#viewer@user:anne'))).toEqual({ allowed: true });
    expect(evaluations).toHaveBeenCalledTimes(1);
  });

  it('computes the answer again once a tuple of the tenant was added or removed', () => {
    const { store, ask, evaluations } = fixture();
    expect(ask(checkOf('document:plan#viewer@user:bob'))).toEqual({ allowed: false });
    store.add(parseTuple('group:eng#member@user:bob'));
    expect(ask(checkOf('document:plan#viewer@user:bob'))).toEqual({ allowed: true });
    store.remove(parseTuple('group:eng#member@user:bob'));
    expect(ask(checkOf('document:plan#viewer@user:bob'))).toEqual({ allowed: false });
    expect(evaluations).toHaveBeenCalledTimes(3);
    // A write that changes nothing (the tuple already there) leaves the answers valid.
    store.add(parseTuple('group:eng#member@user:anne'));
    ask(checkOf('document:plan#viewer@user:bob'));
    expect(evaluations).toHaveBeenCalledTimes(3);
  });

  it('keeps answers apart by tenant and by model', () => {
    const { ask, evaluations } = fixture();
    const request = checkOf('document:plan#viewer@user:anne');
    ask(request, 'acme');
    ask(request, 'globex');
    ask(request, 'acme', compileModel(MODEL).typesystem);
    expect(evaluations).toHaveBeenCalledTimes(3);
  });

  it('never mistakes one question for another whatever their fields hold', () => {
    const { ask, evaluations } = fixture();
    ask({ ...checkOf('document:plan#viewer@user:anne'), objectId: 'a1', relation: 'viewer' });
    // A plain concatenation of the fields would name the same key: this one is evaluated (and invalid).
    expect(() => ask({ ...checkOf('document:plan#viewer@user:anne'), objectId: 'a', relation: '1viewer' })).toThrow(/not defined/);
    ask(checkOf('document:plan#viewer@group:eng#member'));
    ask(checkOf('document:plan#viewer@group:eng'));
    expect(evaluations).toHaveBeenCalledTimes(4);
  });

  it('does not keep explained checks, invalid questions or checks with contextual tuples', () => {
    const { ask, evaluations } = fixture();
    const explained = { ...checkOf('document:plan#viewer@user:anne'), explain: true };
    expect(ask(explained)).toMatchObject({ allowed: true, resolution: expect.any(Object) });
    expect(ask(explained)).toMatchObject({ resolution: expect.any(Object) });
    const contextual = { ...checkOf('document:plan#viewer@user:carl'), contextualTuples: [parseTuple('document:plan#viewer@user:carl')] };
    expect(ask(contextual)).toEqual({ allowed: true });
    expect(ask(checkOf('document:plan#viewer@user:carl'))).toEqual({ allowed: false });
    expect(() => ask(checkOf('document:plan#owner@user:anne'))).toThrow(/not defined/);
    expect(() => ask(checkOf('document:plan#owner@user:anne'))).toThrow(/not defined/);
    expect(evaluations).toHaveBeenCalledTimes(6);
  });

  it('keeps at most its capacity, the answers asked least recently leaving first', () => {
    const { ask, evaluations } = fixture(2);
    for (const subject of ['anne', 'bob', 'carl']) ask(checkOf(`document:plan#viewer@user:${subject}`));
    ask(checkOf('document:plan#viewer@user:carl'));
    ask(checkOf('document:plan#viewer@user:bob'));
    expect(evaluations).toHaveBeenCalledTimes(3);
    ask(checkOf('document:plan#viewer@user:anne'));
    expect(evaluations).toHaveBeenCalledTimes(4);
  });

  it('keeps nothing with a capacity of 0: every check is evaluated (FGA_CHECK_ANSWERS_KEPT=0)', () => {
    const { ask, evaluations } = fixture(0);
    expect(ask(checkOf('document:plan#viewer@user:anne'))).toEqual({ allowed: true });
    expect(ask(checkOf('document:plan#viewer@user:anne'))).toEqual({ allowed: true });
    expect(evaluations).toHaveBeenCalledTimes(2);
  });
});
