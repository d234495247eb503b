// Facts that change: each an older claim, the newer one that replaces it (one value changed, the
// rest the same words or with a stop word such as "now" added), and a question that names neither
// value. Written for the knowledge-update tests and `npm run bench memory-updates`; nothing in
// memory/ is tuned to them. The older held from January, the newer from June (of 2026).
export type UpdatePair = { kind: string; old: string; new: string; query: string };

export const UPDATE_PAIRS: UpdatePair[] = [
  { kind: 'server', old: 'The web app runs on atlas-one', new: 'The web app runs on borealis-two', query: 'which server does the web app run on' },
  { kind: 'server', old: 'Nightly backups are written to the host nas-east', new: 'Nightly backups are written to the host nas-west', query: 'where are the nightly backups written' },
  { kind: 'server', old: 'The staging database listens on port 5432', new: 'The staging database now listens on port 6432', query: 'staging database port' },
  { kind: 'server', old: 'Grafana is reachable at 10.0.3.17', new: 'Grafana is reachable at 10.0.8.40', query: 'what address is grafana reachable at' },
  { kind: 'server', old: 'The mail relay for the shop is smtp-a.example.net', new: 'The mail relay for the shop is smtp-c.example.net', query: 'mail relay for the shop' },
  { kind: 'server', old: 'Our DNS is hosted at Gandi', new: 'Our DNS is hosted at Cloudflare', query: 'who hosts our DNS' },
  { kind: 'server', old: 'The CI runners use the image node-20-slim', new: 'The CI runners use the image node-22-slim', query: 'which image do the CI runners use' },
  { kind: 'place', old: 'The deploy key for the blog lives in the ops vault', new: 'The deploy key for the blog lives in the personal vault', query: 'where is the deploy key for the blog' },
  { kind: 'place', old: 'The spare office keys are kept in the blue drawer', new: 'The spare office keys are now kept in the reception safe', query: 'where are the spare office keys kept' },
  { kind: 'place', old: 'Dana lives in Lisbon', new: 'Dana lives in Porto', query: 'where does Dana live' },
  { kind: 'place', old: 'The quarterly offsite will be held in Ghent', new: 'The quarterly offsite will be held in Utrecht', query: 'where is the quarterly offsite' },
  { kind: 'place', old: 'Invoices are filed in the finance share under /2026/paid', new: 'Invoices are filed in the finance share under /archive/paid', query: 'where are invoices filed' },
  { kind: 'place', old: 'The project wiki is hosted on Confluence', new: 'The project wiki is hosted on Notion', query: 'where is the project wiki hosted' },
  { kind: 'owner', old: 'Alice owns the billing service', new: 'Marco owns the billing service', query: 'who owns the billing service' },
  { kind: 'owner', old: 'The on-call lead this quarter is Priya', new: 'The on-call lead this quarter is Tomasz', query: 'who is the on-call lead this quarter' },
  { kind: 'owner', old: 'Security reviews are signed off by Helen Okafor', new: 'Security reviews are signed off by Sam Reyes', query: 'who signs off security reviews' },
  { kind: 'owner', old: 'The newsletter is edited by Jonas', new: 'The newsletter is now edited by Ines', query: 'who edits the newsletter' },
  { kind: 'owner', old: 'Our accountant is Berger and Partner', new: 'Our accountant is Nordlicht Tax', query: 'who is our accountant' },
  { kind: 'owner', old: 'The domain example.org is registered to Kevin', new: 'The domain example.org is registered to the company', query: 'who is the domain example.org registered to' },
  { kind: 'count', old: 'The team has 5 engineers', new: 'The team has 8 engineers', query: 'how many engineers does the team have' },
  { kind: 'count', old: 'The API rate limit is 100 requests per minute', new: 'The API rate limit is 250 requests per minute', query: 'what is the API rate limit' },
  { kind: 'count', old: 'The monthly hosting bill is 420 euros', new: 'The monthly hosting bill is 610 euros', query: 'how much is the monthly hosting bill' },
  { kind: 'count', old: 'We keep 7 days of logs', new: 'We keep 30 days of logs', query: 'how many days of logs do we keep' },
  { kind: 'count', old: 'The newsletter has 1,200 subscribers', new: 'The newsletter has 1,950 subscribers', query: 'how many subscribers does the newsletter have' },
  { kind: 'count', old: 'The build cache holds 40 GB', new: 'The build cache holds 120 GB', query: 'how big is the build cache' },
  { kind: 'count', old: 'Each reviewer gets three pull requests a day', new: 'Each reviewer gets five pull requests a day', query: 'how many pull requests does each reviewer get' },
  { kind: 'date', old: 'The TLS certificate expires on 2026-03-14', new: 'The TLS certificate expires on 2027-03-14', query: 'when does the TLS certificate expire' },
  { kind: 'date', old: 'The product launch is planned for 12 May', new: 'The product launch is planned for 9 June', query: 'when is the product launch' },
  { kind: 'date', old: 'Rent is due on the 1st of each month', new: 'Rent is due on the 15th of each month', query: 'when is rent due' },
  { kind: 'date', old: 'The standup starts at 9:30', new: 'The standup starts at 10:15', query: 'what time does the standup start' },
  { kind: 'date', old: 'The code freeze begins on Thursday', new: 'The code freeze begins on Monday', query: 'when does the code freeze begin' },
  { kind: 'date', old: 'Kim is on parental leave until August', new: 'Kim is on parental leave until October', query: 'how long is Kim on parental leave' },
  { kind: 'preference', old: 'My favourite colour is purple', new: 'My favourite colour is cyan', query: 'favourite colour' },
  { kind: 'preference', old: 'I prefer tea in the morning', new: 'I prefer coffee in the morning', query: 'what do I drink in the morning' },
  { kind: 'preference', old: 'The operator wants reports in German', new: 'The operator wants reports in English', query: 'which language should reports be in' },
  { kind: 'preference', old: 'Commit messages should be written in the imperative mood', new: 'Commit messages should be written in the past tense', query: 'how should commit messages be written' },
  { kind: 'preference', old: 'My editor of choice is Vim', new: 'My editor of choice is Helix', query: 'editor of choice' },
  { kind: 'preference', old: 'Ravi is vegetarian', new: 'Ravi is vegan', query: 'what does Ravi eat' },
  { kind: 'preference', old: 'The dashboard theme is set to dark', new: 'The dashboard theme is set to light', query: 'dashboard theme' },
  { kind: 'state', old: 'The payments feature flag is off', new: 'The payments feature flag is on', query: 'is the payments feature flag enabled' },
  { kind: 'state', old: 'The mobile app is at version 3.4.1', new: 'The mobile app is at version 3.6.0', query: 'what version is the mobile app' },
  { kind: 'state', old: 'Our primary region is eu-central-1', new: 'Our primary region is eu-west-3', query: 'what is our primary region' },
  { kind: 'state', old: 'The office wifi password is kept by Lena', new: 'The office wifi password is kept by Farid', query: 'who keeps the office wifi password' },
  { kind: 'state', old: 'The blog is built with Hugo', new: 'The blog is built with Astro', query: 'what is the blog built with' },
];

// When each held, as the CLI's --valid-from takes it, and a time between them.
export const OLD_FROM = '2026-01-12T09:00:00.000Z';
export const NEW_FROM = '2026-06-03T09:00:00.000Z';
export const BETWEEN = '2026-03-20T12:00:00.000Z';
