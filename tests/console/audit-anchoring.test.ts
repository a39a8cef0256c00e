// The audit screen's anchoring panel in Chromium against a real gateway with three checkpoint
// sinks: a file, an HTTP endpoint that is down, and a witness written from the C2SP spec. The
// panel shows the latest checkpoint (its size and root as the REST route serves them, its age,
// the witness that cosigned it), each sink's state — the endpoint failing with its last error
// while the others anchor, then caught up once it answers — and "Verify chain" reports the trail
// anchored, then, after the newest entries are cut off in the database, not the signed history.
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseCheckpoint, parseNote } from '../../shared/tlog/index.js';
import { truncateTrail } from '../support/audit-tampering.js';
import { startTestWitness, type TestWitness } from '../support/test-witness.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: audit anchoring', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  let witness: TestWitness;
  let endpoint: Server;
  let endpointUp = false;
  const posted: string[] = [];
  let sinkFile: string;

  beforeAll(async () => {
    endpoint = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (!endpointUp) {
          response.writeHead(503).end('maintenance');
          return;
        }
        posted.push(body);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    witness = await startTestWitness({ name: 'witness.test/console' });
    sinkFile = join(await mkdtemp(join(tmpdir(), 'anchoring-')), 'checkpoints.log');
    gateway = await startConsoleGateway({
      auditCheckpoints: {
        entries: 1_000_000,
        seconds: 3600,
        sinkFile,
        sinkUrl: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/anchor`,
        witness: { url: witness.url, key: witness.verifierKey },
      },
    });
    const logKey = (
      await (await fetch(`${gateway.url}/api/v1/audit/checkpoint/key`)).text()
    ).trim();
    witness.trust = { prefix: logKey.slice(0, logKey.indexOf('+')), logKey };
    for (let i = 0; i < 4; i++) {
      await gateway.runtime.audit.append({
        tenantId: gateway.tenant.id,
        action: 'test.event',
        resourceType: 'test',
        resourceId: `r${i}`,
      });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await witness?.close();
    await new Promise((resolve) => endpoint?.close(resolve));
  });

  const sinkRow = (page: Page, kind: string) =>
    page.getByRole('table', { name: 'Checkpoint sinks' }).locator(`tr[data-sink^="${kind}:"]`);

  /** The served checkpoint, as an auditor fetches it. */
  const served = async () => {
    const response = await fetch(`${gateway.url}/api/v1/audit/checkpoint`, {
      headers: { authorization: `Bearer ${gateway.consoleKey}` },
    });
    const note = parseNote(await response.text());
    if (typeof note === 'string') throw new Error(note);
    const checkpoint = parseCheckpoint(note.text);
    if (typeof checkpoint === 'string') throw new Error(checkpoint);
    return checkpoint;
  };

  it('shows the checkpoint, its witness and each sink, a sink that is down included, until it catches up', async () => {
    browser = await launchConsoleBrowser();
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'Audit trail' }).click();
    const panel = page.getByRole('region', { name: 'Anchoring' });
    await panel.waitFor();

    const exported = await fetch(`${gateway.url}/api/v1/audit/export`, {
      headers: { authorization: `Bearer ${gateway.consoleKey}` },
    });
    const entries = ((await exported.json()) as unknown[]).length;
    expect(entries).toBeGreaterThanOrEqual(4);
    await panel.getByRole('button', { name: 'Cut checkpoint' }).click();
    await panel
      .getByLabel('Checkpoint tree size')
      .filter({ hasText: `${entries} entries` })
      .waitFor();
    const checkpoint = await served();
    expect(checkpoint.size).toBe(entries);
    expect(await panel.getByLabel('Checkpoint root', { exact: true }).textContent()).toBe(
      Buffer.from(checkpoint.rootHash).toString('base64'),
    );
    expect(await panel.getByLabel('Checkpoint age').textContent()).toMatch(/^\d+ s ago$/);

    // The witness cosigns it; the file holds it; the endpoint answers 503 and keeps failing.
    await panel.getByTestId('cosigners').filter({ hasText: witness.name }).waitFor();
    await sinkRow(page, 'file').filter({ hasText: 'Anchored' }).waitFor();
    expect(await sinkRow(page, 'file').locator('[data-column="anchored"]').textContent()).toContain(
      `${checkpoint.size} of ${checkpoint.size} entries`,
    );
    await sinkRow(page, 'witness').filter({ hasText: 'Anchored' }).waitFor();
    const http = sinkRow(page, 'http');
    await http.filter({ hasText: 'Failing, retrying' }).waitFor();
    expect(await http.locator('[data-column="error"]').textContent()).toContain('503');
    expect(Number(await http.locator('[data-column="backlog"]').textContent())).toBeGreaterThan(0);
    expect(posted).toEqual([]);
    // Folded on a phone, the panel's one line says so.
    await page.setViewportSize({ width: 390, height: 844 });
    await panel
      .getByTestId('anchoring-summary')
      .filter({ hasText: '1 of 3 sinks failing' })
      .waitFor();
    await page.setViewportSize({ width: 1280, height: 720 });
    await http.waitFor();

    // Back up: the sink catches up by itself and the panel, refreshing, shows it anchored.
    endpointUp = true;
    await http.filter({ hasText: 'Anchored' }).waitFor({ timeout: 90_000 });
    expect(await http.locator('[data-column="error"]').textContent()).toBe('—');
    expect(posted.length).toBeGreaterThan(0);

    // On a phone the panel folds to one line, leaving the screen to the trail; opened,
    // each sink's kind and state fit, and nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await panel
      .getByTestId('anchoring-summary')
      .filter({ hasText: `${checkpoint.size} entries, signed` })
      .filter({ hasText: '3 of 3 sinks anchored' })
      .waitFor();
    expect(await panel.getByRole('table', { name: 'Checkpoint sinks' }).count()).toBe(0);
    await panel.getByRole('button', { name: 'Details' }).click();
    for (const kind of ['file', 'http', 'witness']) {
      const badge = sinkRow(page, kind).locator('[data-column="state"]');
      await badge.filter({ hasText: 'Anchored' }).waitFor();
      const box = await badge.boundingBox();
      expect(box!.x + box!.width, kind).toBeLessThanOrEqual(390);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('verifies the chain against the latest checkpoint, and catches a trail cut short after it', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByRole('region', { name: 'Anchoring' }).waitFor();
    const checkpoint = await served();

    await page.getByRole('button', { name: 'Verify chain' }).click();
    const valid = page.getByRole('status').filter({ hasText: 'Chain valid and anchored' });
    await valid.waitFor();
    const outcome = await valid.getByTestId('anchor-outcome').textContent();
    expect(outcome).toContain(`The first ${checkpoint.size} entries are exactly the history`);
    expect(outcome).toContain(`cosigned by ${witness.name}`);

    // What only a database superuser can do: the newest two entries removed, the head moved back.
    await truncateTrail(gateway.db, gateway.tenant.id, checkpoint.size - 2);

    await page.getByRole('button', { name: 'Verify chain' }).click();
    const failed = page
      .getByRole('alert')
      .filter({ hasText: 'Not the history the checkpoint signed' });
    await failed.waitFor();
    expect(await failed.getByTestId('anchor-findings').textContent()).toContain(
      'AUDIT_CHECKPOINT_NOT_REACHED',
    );
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
